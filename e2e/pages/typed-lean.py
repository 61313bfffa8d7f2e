"""A type-hinted component (the README's way) whose hints are simple: the loader boots it with
agentsurface alone, and its schemas, descriptors and input checks come without pydantic."""

import json
import sys
from typing import Literal

import js

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

received: list[dict[str, object]] = []


def _seen(**values: object) -> None:
    received.append({name: [type(value).__name__, value] for name, value in values.items()})


class DevicesTable(AgentComponent, type="devices.table", description="The devices table"):
    def __init__(self, rows: list[str]) -> None:
        self.rows, self.selected = rows, []

    @observation("Ids of the rows currently shown")
    def visible_rows(self) -> list[str]:
        return self.rows

    @action("Select rows by id")
    def select_rows(self, ids: list[str], mode: Literal["replace", "add"] = "replace") -> list[str]:
        _seen(ids=ids, mode=mode)
        self.selected = ids if mode == "replace" else [*self.selected, *ids]
        return self.selected

    @action("Zoom the table")
    def zoom(self, factor: float, steps: int | None = None) -> float:
        _seen(factor=factor, steps=steps)
        return factor


registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([DevicesTable])))
registry.register(DevicesTable(["dev-1", "dev-2"]))
adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("typed-agent", "webmcp"))  # noqa: F704
js.window.typedAtFirstTool = ",".join(
    sorted(m for m in ("pydantic", "pydantic_core", "jsonschema") if m in sys.modules)
)
js.window.typedReceived = lambda: json.dumps(received)
js.window.typedPydanticNow = lambda: "pydantic" in sys.modules
